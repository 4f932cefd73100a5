import Foundation
import Hummingbird
import JSONLedger

// The changes of a batch or of a diff between two points, as the console shows them: counted
// by entity and kind (each count a link to those changes alone), 50 objects a page, each
// object's changed fields only, with what changed inside a JSON value or a text.

extension LedgerRoutes {
  /// Objects a page of changes shows at once.
  static let changesPageSize = 50

  /// The changes of a batch or a diff as the console shows them at `path` (whose query keeps
  /// `kept`), filtered by the request's `entity` and `kind`: its `page` of `changesPageSize`
  /// objects, the only ones described, by `describe`.
  func changes(
    values: RequestValues, path: String, kept: [URLQueryItem] = [],
    describe: (ChangePage.Request) async throws -> ChangePage
  ) async throws -> HTML {
    let dateFormat = ledger.model.dateFormat
    let entityFilter = values.query("entity").flatMap { $0.isEmpty ? nil : $0 }
    let kindFilter = values.query("kind").flatMap { $0.isEmpty ? nil : $0 }
    let kinds: [ObjectChange.Kind] = [.created, .updated, .deleted]
    let kind = kindFilter.flatMap { text in kinds.first { $0.description == text } }
    if let kindFilter, kind == nil {
      throw APIFailure.badRequest("kind must be created, updated or deleted, not \"\(kindFilter.prefix(80))\"")
    }
    let pageNumber =
      try values.query("page").map { text in
        guard let number = Int(text), number >= 1 else {
          throw APIFailure.badRequest("page must be a whole number from 1, not \"\(text.prefix(80))\"")
        }
        return number
      } ?? 1
    var request = ChangePage.Request(
      entity: entityFilter, kind: kind, offset: (pageNumber - 1) * Self.changesPageSize, limit: Self.changesPageSize)
    var described = try await describe(request)
    let pages = max(1, (described.matching + Self.changesPageSize - 1) / Self.changesPageSize)
    // A page past the last shows the last.
    if pageNumber > pages {
      request.offset = (pages - 1) * Self.changesPageSize
      described = try await describe(request)
    }
    // What the batch did, by entity and kind: each count a link to those changes alone.
    var counts: [(entity: String, kinds: [String: Int])] = []
    for count in described.counts {
      if let index = counts.firstIndex(where: { $0.entity == count.entity }) {
        counts[index].kinds[count.kind.description, default: 0] += count.count
      } else {
        counts.append((count.entity, [count.kind.description: count.count]))
      }
    }
    func link(entity: String?, kind: String?, page: Int? = nil) -> String {
      var components = URLComponents()
      components.queryItems =
        (entity.map { [URLQueryItem(name: "entity", value: $0)] } ?? [])
        + (kind.map { [URLQueryItem(name: "kind", value: $0)] } ?? [])
        + (page.map { [URLQueryItem(name: "page", value: String($0))] } ?? [])
      components.queryItems = kept + (components.queryItems ?? [])
      let query = components.percentEncodedQuery ?? ""
      return "\(path)\(query.isEmpty ? "" : "?" + query)"
    }
    let summaryRows = counts.map { entity, kinds in
      let cells = ["created", "updated", "deleted"].map { kind in
        let count = kinds[kind] ?? 0
        return count == 0
          ? HTML("<td>0</td>") : HTML("<td><a href=\"\(link(entity: entity, kind: kind))\">\(count)</a></td>")
      }
      return HTML(
        "<tr><th scope=\"row\"><a href=\"\(link(entity: entity, kind: nil))\">\(entity)</a></th>\(cells)</tr>")
    }
    var byEntity: [(String, [HTML])] = []
    for change in described.changes {
      let keyText = Self.keyText(change.key.identity, dateFormat: dateFormat)
      // The changed fields only, each as what changed inside it.
      let fields = change.attributes.map { attribute in
        let (old, new) = ConsoleValues.change(attribute.old, attribute.new, dateFormat: dateFormat)
        return HTML(
          "<tr><th scope=\"row\">\(attribute.name)</th><td class=\"old\">\(old)</td><td class=\"new\">\(new)</td></tr>")
      }
      // An ordered list's order is its value: the list after the batch is shown with it.
      let links = change.links.map { link in
        HTML(
          """
          <tr><th scope="row">\(link.relationship)</th><td class="old">\(ConsoleValues.cell(Self.keysText(link.removed, dateFormat)))</td>
          <td class="new">\(ConsoleValues.cell(Self.keysText(link.added, dateFormat)))\(link.order.map { HTML("<br>order: \(ConsoleValues.cell(Self.keysText($0, dateFormat)))") } ?? "")</td></tr>
          """)
      }
      let section: HTML = """
        <h4><span class="kind">\(change.kind.description)</span> <a href="\(Self.objectPath(change.key.entity, keyText))">\(change.key.entity) \(keyText)</a></h4>
        <div class="scroll"><table><caption>\(change.key.entity) \(keyText): before → after</caption>
        <thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
        <tbody>\(fields)\(links)</tbody></table></div>
        """
      if let index = byEntity.firstIndex(where: { $0.0 == change.key.entity }) {
        byEntity[index].1.append(section)
      } else {
        byEntity.append((change.key.entity, [section]))
      }
    }
    let groups = byEntity.map { entity, sections in HTML("<h3 class=\"entity\">\(entity)</h3>\(sections)") }
    var paging: HTML = ""
    if pages > 1 {
      let current = min(pageNumber, pages)
      let previous: HTML =
        current > 1
        ? "<a href=\"\(link(entity: entityFilter, kind: kindFilter, page: current - 1))\" rel=\"prev\">Previous</a>"
        : ""
      let next: HTML =
        current < pages
        ? "<a href=\"\(link(entity: entityFilter, kind: kindFilter, page: current + 1))\" rel=\"next\">Next</a>" : ""
      paging =
        "<nav class=\"paging\" aria-label=\"Pages of changes\">\(previous) <span>page \(current) of \(pages)</span> \(next)</nav>"
    }
    let filterSaid: HTML =
      entityFilter == nil && kindFilter == nil
      ? ""
      : "<p>Showing \(Self.counted(described.matching, "change"))\(entityFilter.map { " to \($0)" } ?? "")\(kindFilter.map { ", \($0)" } ?? ""). <a href=\"\(link(entity: nil, kind: nil))\">All changes</a></p>"
    let summary: HTML =
      counts.isEmpty
      ? "<p>No object changes.</p>"
      : """
      <div class="scroll"><table><caption>Changes by entity and kind</caption><thead><tr><th scope="col">Entity</th><th scope="col">Created</th><th scope="col">Updated</th><th scope="col">Deleted</th></tr></thead><tbody>\(summaryRows)</tbody></table></div>
      """
    return "\(summary)\(filterSaid)\(paging)\(groups)\(paging)"
  }
}
