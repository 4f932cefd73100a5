import Foundation
import Hummingbird
import JSONLedger

// The audit console: server-rendered pages over the same ledger as the API. Every value from
// a payload or a request goes through `HTML`'s escaping interpolation.

extension LedgerRoutes {
  func addConsoleRoutes<Routes: RouterMethods>(to router: Routes) {
    router.get("console.css") { _, _ in Self.asset(ConsoleAssets.css, type: "text/css; charset=utf-8") }
    router.get("console.js") { _, _ in Self.asset(ConsoleAssets.javascript, type: "text/javascript; charset=utf-8") }
    addReportRoute(to: router)
    router.get("") { request, context in
      try await page(request) { values in try await timeline(values) }
    }
    router.get("batches/:batch") { request, context in
      try await page(request, context.parameters) { values in try await batchPage(values) }
    }
    router.get("objects/:entity/:key") { request, context in
      try await page(request, context.parameters) { values in try await objectPage(values) }
    }
    // A key a path cannot hold (`.` and `..` are dot segments a browser folds away).
    router.get("objects/:entity") { request, context in
      try await page(request, context.parameters) { values in try await objectPage(values) }
    }
    router.get("diff") { request, context in
      try await page(request) { values in try await diffPage(values) }
    }
    router.get("entities/:entity") { request, context in
      try await page(request, context.parameters) { values in try await entityPage(values) }
    }
  }

  private static func asset(_ text: String, type: String) -> Response {
    Response(
      status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }

  /// A console page: with `tokenForReads`, the token comes as the cookie the page's token
  /// field sets; an error is a page that says it, with the API's status.
  private func page(
    _ request: Request, _ parameters: Parameters = Parameters(), _ body: (RequestValues) async throws -> (String, HTML)
  ) async throws -> Response {
    let values = RequestValues(request: request, parameters: parameters, options: options)
    if options.tokenForReads, !options.authorizes(request.headers[.authorization]),
      !options.authorizes(Self.cookieToken(request).map { "Bearer " + $0 })
    {
      return Self.html(
        title: "Token needed",
        HTML("<h1>Token needed</h1><p>Reads on this server need its token: enter it above and reload.</p>"),
        entities: [], status: .unauthorized)
    }
    do {
      let (title, content) = try await current.running { try await body(values) }
      return Self.html(title: title, content, entities: ledger.model.entities.map(\.name))
    } catch {
      let failure =
        (error as? LedgerError).map { APIFailure($0, dateFormat: ledger.model.dateFormat) } ?? (error as? APIFailure)
      guard let failure else { throw error }
      let message = failure.body.objectValue?["message"]?.stringValue ?? ""
      return Self.html(
        title: "Error",
        HTML("<h1>\(failure.status.code) \(failure.status.reasonPhrase)</h1><p role=\"alert\">\(message)</p>"),
        entities: ledger.model.entities.map(\.name), status: failure.status)
    }
  }

  private static func cookieToken(_ request: Request) -> String? {
    guard let header = request.headers[.cookie] else { return nil }
    for part in header.split(separator: ";") {
      let pair = part.trimmingCharacters(in: .whitespaces)
      if pair.hasPrefix("jsonledger_token=") {
        return String(pair.dropFirst("jsonledger_token=".count)).removingPercentEncoding
      }
    }
    return nil
  }

  private static func html(title: String, _ content: HTML, entities: [String], status: HTTPResponse.Status = .ok)
    -> Response
  {
    let navigation = entities.map { HTML("<li><a href=\"/entities/\(pathComponent($0))\">\($0)</a></li>") }
    let page: HTML = """
      <!doctype html>
      <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
      <title>\(title) · JSONLedger</title><link rel="stylesheet" href="/console.css"><script src="/console.js" defer></script></head>
      <body><header><a href="/"><strong>JSONLedger</strong> audit console</a> <a href="/diff">Diff</a>
      <nav aria-label="Entities"><ul class="entities">\(navigation)</ul></nav>
      <form id="token-form"><label for="token">Token</label><input id="token" type="password" autocomplete="new-password" aria-describedby="token-use"><span id="token-use" class="hint">unlocks reverts (and reads, when the server asks for it)</span>
      <button type="submit">Save token</button><span id="token-status" role="status"></span></form></header>
      <main id="main">\(content)</main></body></html>
      """
    return Response(
      status: status,
      headers: [
        .contentType: "text/html; charset=utf-8",
        .contentSecurityPolicy: Self.contentSecurityPolicy,
      ],
      body: ResponseBody(byteBuffer: ByteBuffer(string: page.description)))
  }

  /// Scripts, styles and images from the server alone (no inline code), what a browser
  /// blocks reported to `/csp-reports` (`ConsoleReports.swift`).
  static let contentSecurityPolicy =
    "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; report-uri /csp-reports"

  // MARK: Pages

  private func timeline(_ values: RequestValues) async throws -> (String, HTML) {
    let limit = try values.limit()
    let entity = values.query("entity")
    let key = values.query("key")
    let entries: [LogEntry]
    var filter: HTML = ""
    if let entity, let key {
      entries = try await ledger.log(entity, key: .string(key))
      filter =
        "<p>Batches that changed <a href=\"\(Self.objectPath(entity, key))\">\(entity) \(key)</a>.</p>"
    } else {
      let before = try values.query("before").map { try values.batchID($0, name: "before") }
      entries = try await ledger.log(limit: limit, before: before)
    }
    let rows = entries.map { entry -> HTML in
      // A batch a revert undid, and a revert, say which batch undid or was undone.
      var marks: HTML = ""
      if let by = entry.revertedBy {
        marks = " <a class=\"tag\" href=\"/batches/\(by)\">reverted by \(by)</a>"
      }
      if let reverted = entry.metadata.revertedBatchID {
        marks = "\(marks) <a class=\"tag\" href=\"/batches/\(reverted)\">reverts \(reverted)</a>"
      }
      return HTML(
        """
        <tr><td><a href="/batches/\(entry.batchID)">\(entry.batchID)</a>\(marks)</td><td>\(Ledger.timeText(entry.time))</td>
        <td class="kind">\(entry.kind.description)</td><td>\(entry.metadata.author ?? "")</td><td>\(ConsoleValues.cell(entry.metadata.message ?? ""))</td>
        <td>\(ConsoleValues.cell(entry.metadata.source ?? ""))</td>
        <td>\(entry.statistics.created)</td><td>\(entry.statistics.updated)</td><td>\(entry.statistics.deleted)</td>
        <td>\(entry.statistics.unchanged)</td></tr>
        """)
    }
    var more: HTML = ""
    if entity == nil, entries.count == limit, let last = entries.last, last.batchID > 1 {
      more = "<p><a href=\"/?before=\(last.batchID)\">Older batches</a></p>"
    }
    let entityOptions = ledger.model.entities.map { candidate in
      candidate.name == entity
        ? HTML("<option selected>\(candidate.name)</option>") : HTML("<option>\(candidate.name)</option>")
    }
    let content: HTML = """
      <h1>Timeline</h1>
      <form class="filters" method="get" action="/"><label for="filter-entity">Entity<select id="filter-entity" name="entity"><option value="">(any)</option>\(entityOptions)</select></label>
      <label for="filter-key">Key<input id="filter-key" name="key" value="\(key ?? "")"></label><button type="submit">Filter</button></form>
      \(filter)\(entity == nil ? ConsoleCharts.batches(entries) : "")
      <div class="scroll"><table><caption>Batches, newest first</caption>
      <thead><tr><th scope="col">Batch</th><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">Author</th><th scope="col">Message</th><th scope="col">Source</th>
      <th scope="col">Created</th><th scope="col">Updated</th><th scope="col">Deleted</th><th scope="col">Unchanged</th></tr></thead>
      <tbody>\(rows)</tbody></table></div>\(entries.isEmpty ? HTML("<p>No batches.</p>") : "")\(more)
      """
    return ("Timeline", content)
  }

  private func batchPage(_ values: RequestValues) async throws -> (String, HTML) {
    let batchID = try values.batchID(try values.path("batch"), name: "batch")
    // Rows an object owns are told as its fields; hidden reverse lists are left out. The
    // record's outline is read once a page: its header comes with the first.
    var entry: LogEntry?
    let changes = try await changes(values: values, path: "/batches/\(batchID)") { request in
      let page = try await ledger.describe(batch: batchID, page: request)
      entry = page.entry
      return page.changes
    }
    // `changes` asked for a page at least once, so the entry is there.
    guard let record = entry else { return ("Batch \(batchID)", "") }
    let revertedBy = record.revertedBy
    let statistics = record.statistics
    let reverts: HTML =
      record.metadata.revertedBatchID.map { HTML("<p>Reverts <a href=\"/batches/\($0)\">batch \($0)</a>.</p>") } ?? ""
    let reverted: HTML =
      revertedBy.map {
        HTML("<p role=\"note\" class=\"notice\">Already reverted by <a href=\"/batches/\($0)\">batch \($0)</a>.</p>")
      } ?? ""
    let revertSection: HTML =
      revertedBy == nil && !options.readOnly
      ? """
      <section aria-labelledby="revert-heading"><h2 id="revert-heading">Revert</h2>
      <p>See what a revert would do first; writing it needs the token.</p>
      <button type="button" data-revert-plan="\(batchID)">Show revert plan</button>
      <button type="button" data-revert="\(batchID)">Revert batch \(batchID)</button>
      <div id="revert-choices" hidden><p>Later batches changed some of these fields. Choose:</p>
      <button type="button" id="keep-later" data-revert="\(batchID)" data-mode="keepLater">Revert, keeping the later changes (recommended)</button>
      <button type="button" id="show-force" data-show-force>Revert anyway…</button>
      <button type="button" id="cancel-revert" data-cancel-revert>Cancel</button>
      <div id="force-confirm" hidden><p id="force-said">Reverting anyway overwrites the later changes listed above.</p>
      <label for="force-batch">Type the batch number, \(batchID), to confirm</label> <input id="force-batch" inputmode="numeric" aria-describedby="force-said">
      <button type="button" id="force-revert" data-revert="\(batchID)" data-mode="force" data-confirm="\(batchID)" disabled>Revert anyway (overwrite later changes)</button></div></div>
      <div id="result" role="status" aria-live="polite"></div><a id="new-batch" hidden href="/">new batch</a></section>
      """
      : ""
    let content: HTML = """
      <h1>Batch \(batchID)</h1>\(reverted)
      <dl><dt>Time</dt><dd>\(Ledger.timeText(record.time))</dd><dt>Kind</dt><dd class="kind">\(record.kind.description)</dd>
      <dt>Author</dt><dd>\(record.metadata.author ?? "—")</dd><dt>Message</dt><dd>\(ConsoleValues.cell(record.metadata.message ?? "—"))</dd>
      <dt>Source</dt><dd>\(ConsoleValues.cell(record.metadata.source ?? "—"))</dd>
      <dt>Counts</dt><dd>\(statistics.created) created, \(statistics.updated) updated, \(statistics.deleted) deleted, \(statistics.unchanged) unchanged</dd></dl>
      \(reverts)\(revertSection)
      <h2>Changes</h2>\(changes)
      """
    return ("Batch \(batchID)", content)
  }

  private func diffPage(_ values: RequestValues) async throws -> (String, HTML) {
    let from = try values.batchOrTime("from", in: ledger, emptyStoreAllowed: true)
    let to = try values.batchOrTime("to", in: ledger, emptyStoreAllowed: true)
    var result: HTML = ""
    if let from, let to {
      let diff = try await ledger.diff(from: from, to: to)
      let changes = try await changes(
        values: values, path: "/diff",
        kept: [URLQueryItem(name: "from", value: String(from)), URLQueryItem(name: "to", value: String(to))]
      ) { request in
        try await ledger.describe(diff.changes, from: diff.from, to: diff.to, page: request)
      }
      result = "<h2>From batch \(from) to batch \(to)</h2>\(changes)"
    }
    let content: HTML = """
      <h1>Diff</h1><p>What changed between two points of the log: batch ids (0 is the empty store) or ISO 8601 times.</p>
      <form class="filters" method="get" action="/diff"><label for="diff-from">From<input id="diff-from" name="from" value="\(values.query("from") ?? "")"></label>
      <label for="diff-to">To<input id="diff-to" name="to" value="\(values.query("to") ?? "")"></label><button type="submit">Compare</button></form>
      \(result)
      """
    return ("Diff", content)
  }

  private func objectPage(_ values: RequestValues) async throws -> (String, HTML) {
    let entity = try values.path("entity")
    let key = try values.query("key") ?? values.path("key")
    let asOf = try values.asOf(in: ledger)
    let body: @Sendable (borrowing View) throws -> ObjectSnapshot? = { view in
      try view.object(entity, key: .string(key))
    }
    let found = try await read(asOf: asOf, body)
    let dateFormat = ledger.model.dateFormat
    let history = try await ledger.log(entity, key: .string(key))
    let blame = try await ledger.blame(entity, key: .string(key), asOf: asOf)
    // The fields a batch after the as-of one changed: marked "changed since" in the blame.
    var changedLater: Set<String> = []
    if let asOf {
      for entry in history where entry.batchID > asOf {
        guard let change = try entry.change.map({ try ledger.describe($0.withoutHiddenLinks) }) else { continue }
        changedLater.formUnion(change.attributes.map(\.name))
        changedLater.formUnion(change.links.map(\.relationship))
      }
    }
    var current: HTML = "<p>No such object \(asOf.map { "as of batch \($0)" } ?? "now").</p>"
    if let object = found {
      let blameByField = Dictionary(blame.map { ($0.field, $0) }, uniquingKeysWith: { first, _ in first })
      func blameCell(_ field: String) -> HTML {
        guard let entry = blameByField[field] else { return "<td></td>" }
        let changedSince: HTML =
          asOf != nil && changedLater.contains(field) ? " <span class=\"tag\">changed since</span>" : ""
        return
          "<td><a href=\"/batches/\(entry.batchID)\" title=\"\(entry.message ?? "")\">batch \(entry.batchID)</a> \(entry.author.map { "by \($0)" } ?? "") \(Ledger.timeText(entry.time))\(changedSince)</td>"
      }
      // Every field of the entity, a null one too: after a bad batch, the field it nulled is
      // the row an auditor came to see.
      let fields = Self.fieldNames(of: object.key.entity, in: ledger.model)
      let attributes = Set(fields.attributes).union(object.attributes.keys).sorted().map { name in
        HTML(
          "<tr><th scope=\"row\">\(name)</th><td>\(ConsoleValues.cell(Self.text(object.attributes[name], dateFormat)))</td>\(blameCell(name))</tr>"
        )
      }
      let relationships = Set(fields.relationships).union(object.relationships.keys).sorted().map { name in
        let targets = (object.relationships[name] ?? []).map { target in
          let text = Self.keyText(target.identity, dateFormat: dateFormat)
          return HTML(
            "<a href=\"\(Self.objectPath(target.entity, text))\">\(target.entity) \(text)</a> "
          )
        }
        let value: HTML = targets.isEmpty ? "—" : "\(targets)"
        return HTML("<tr><th scope=\"row\">\(name)</th><td>\(value)</td>\(blameCell(name))</tr>")
      }
      current = """
        <div class="scroll"><table><caption>Values \(asOf.map { "as of batch \($0)" } ?? "now"), and the batch that set each (blame)</caption>
        <thead><tr><th scope="col">Field</th><th scope="col">Value</th><th scope="col">Set by</th></tr></thead>
        <tbody>\(attributes)\(relationships)</tbody></table></div>
        """
    }
    let historyRows = try history.map { entry in
      let change = try entry.change.map { try ledger.describe($0.withoutHiddenLinks) }
      let attributes = (change?.attributes ?? []).map { attribute in
        let (old, new) = ConsoleValues.change(attribute.old, attribute.new, dateFormat: dateFormat)
        return HTML(
          "<div>\(attribute.name): <span class=\"old\">\(old)</span> → <span class=\"new\">\(new)</span></div>")
      }
      // What the batch unlinked → what it linked, as on the batch page.
      let links = (change?.links ?? []).map { link in
        HTML(
          "\(link.relationship): <span class=\"old\">\(Self.keysText(link.removed, dateFormat))</span> → <span class=\"new\">\(Self.keysText(link.added, dateFormat))</span>\(link.order.map { HTML(" (order: \(Self.keysText($0, dateFormat)))") } ?? "")<br>"
        )
      }
      let fields = attributes + links
      return HTML(
        """
        <tr><td><a href="/batches/\(entry.batchID)">\(entry.batchID)</a></td><td>\(Ledger.timeText(entry.time))</td>
        <td class="kind">\(change?.kind.description ?? "")</td><td>\(entry.metadata.author ?? "")</td><td>\(fields)</td></tr>
        """)
    }
    // A number field's values over the batches that set it, oldest first, as a small chart.
    var series: [String: [(batch: UInt64, value: Double)]] = [:]
    for entry in history.reversed() {
      guard let change = try entry.change.map({ try ledger.describe($0.withoutHiddenLinks) }) else { continue }
      for attribute in change.attributes {
        guard let value = Self.number(attribute.new) else { continue }
        series[attribute.name, default: []].append((entry.batchID, value))
      }
    }
    let charts = series.keys.sorted().compactMap { name -> HTML? in
      ConsoleCharts.values(series[name] ?? [], field: name).map {
        HTML("<figure><figcaption>\(name)</figcaption>\($0)</figure>")
      }
    }
    let chartSection: HTML =
      charts.isEmpty ? "" : "<h2>Number fields over time</h2><div class=\"charts\">\(charts)</div>"
    let content: HTML = """
      <h1>\(entity) \(key)</h1>
      <form class="filters" method="get">\(values.query("key") != nil ? HTML("<input type=\"hidden\" name=\"key\" value=\"\(key)\">") : "")<label for="as-of">As of batch<input id="as-of" name="asOf" inputmode="numeric" value="\(asOf.map { String($0) } ?? "")"></label>
      <button type="submit">Show</button> <a href="\(Self.objectPath(entity, key))">Now</a></form>
      \(current)
      \(chartSection)
      <h2>History</h2>
      <div class="scroll"><table><caption>Every batch that changed this object, newest first</caption>
      <thead><tr><th scope="col">Batch</th><th scope="col">Time</th><th scope="col">Change</th><th scope="col">Author</th><th scope="col">Fields</th></tr></thead>
      <tbody>\(historyRows)</tbody></table></div>
      """
    return ("\(entity) \(key)", content)
  }

  private func entityPage(_ values: RequestValues) async throws -> (String, HTML) {
    let entity = try values.path("entity")
    let query = try objectQuery(values)
    let asOf = try values.asOf(in: ledger)
    // The count a filter gives is the filtered one, beside the entity's.
    var matching = query
    (matching.limit, matching.cursor) = (nil, nil)
    let counting = matching
    let isFiltered = !counting.conditions.isEmpty || counting.placeholders != nil
    let body: @Sendable (borrowing View) throws -> (QueryPage, Int, Int, Int) = { view in
      // The entity's objects and placeholders counted in one pass over the stored states, read
      // in place (no object is built for a count); the filtered count only under a filter.
      var (total, placeholders) = (0, 0)
      try view.forEachObjectInPlace(entity) { object in
        total += 1
        if try object.isPlaceholder { placeholders += 1 }
      }
      return (try view.objects(query), total, placeholders, isFiltered ? try view.count(counting) : total)
    }
    let (page, total, placeholders, matched) = try await read(asOf: asOf, body)
    let dateFormat = ledger.model.dateFormat
    let attributeNames = Self.columns(
      Set(page.objects.flatMap(\.attributes.keys)), of: entity, in: ledger.model,
      mentioned: (values.queryAll("where") + values.queryAll("sort")).joined(separator: " "))
    let header = attributeNames.map { HTML("<th scope=\"col\">\($0)</th>") }
    let rows = page.objects.map { object in
      let keyText = Self.keyText(object.key.identity, dateFormat: dateFormat)
      let cells = attributeNames.map {
        HTML("<td>\(ConsoleValues.cell(Self.text(object.attributes[$0], dateFormat)))</td>")
      }
      // A placeholder is known only by a reference: said, so that it is not read as data.
      let mark: HTML = object.isPlaceholder ? " <span class=\"tag\">placeholder</span>" : ""
      return HTML(
        "<tr><td><a href=\"\(Self.objectPath(object.key.entity, keyText))\">\(keyText)</a>\(mark)</td>\(cells)</tr>"
      )
    }
    var next: HTML = ""
    if let cursor = page.next {
      var components = URLComponents()
      components.queryItems =
        values.queryAll("where").map { URLQueryItem(name: "where", value: $0) }
        + values.queryAll("sort").map { URLQueryItem(name: "sort", value: $0) }
        + [URLQueryItem(name: "after", value: cursor.token)]
      next =
        "<p><a href=\"/entities/\(Self.pathComponent(entity))?\(components.percentEncodedQuery ?? "")\">Next page</a></p>"
    }
    // Objects imported and placeholders counted apart, each a link to its own list.
    let listPath = "/entities/\(Self.pathComponent(entity))"
    let filtered: HTML = values.queryAll("where").isEmpty ? "" : " \(matched) of them match."
    let counts: HTML =
      placeholders == 0
      ? "\(Self.counted(total, "object"))."
      : "<a href=\"\(listPath)?where=not%20placeholder\">\(Self.counted(total - placeholders, "object"))</a>, <a href=\"\(listPath)?where=placeholder\">\(Self.counted(placeholders, "placeholder"))</a> (known only because other objects refer to them)."
    let content: HTML = """
      <h1>\(entity)</h1><p>\(counts)\(filtered)</p>
      <form class="filters" method="get"><label for="where">Where (weight &gt; 1000 and not placeholder)<input id="where" name="where" value="\(values.queryAll("where").first ?? "")"></label>
      <label for="sort">Sort (field, or -field descending)<input id="sort" name="sort" value="\(values.queryAll("sort").first ?? "")"></label>
      <button type="submit">Search</button></form>
      <div class="scroll"><table><caption>\(entity) objects</caption><thead><tr><th scope="col">Key</th>\(header)</tr></thead><tbody>\(rows)</tbody></table></div>\(next)
      """
    return (entity, content)
  }

  // MARK: Values as text

  /// The attributes and relationships of `entity` and of the entities it inherits from.
  static func fieldNames(of entity: String, in model: Model) -> (attributes: [String], relationships: [String]) {
    var (attributes, relationships): ([String], [String]) = ([], [])
    var next: String? = entity
    var seen: Set<String> = []
    while let name = next, seen.insert(name).inserted, let declaration = model.entity(named: name) {
      attributes += declaration.attributes.map(\.name)
      relationships += declaration.relationships.map(\.name)
      next = declaration.parent
    }
    return (attributes, relationships)
  }

  /// The attribute columns of an entity's list: the identity first, then the fields a filter
  /// or sort names, then the rest by name, and JSON, binary and long text last.
  static func columns(_ names: Set<String>, of entity: String, in model: Model, mentioned: String) -> [String] {
    let declaration = model.entity(named: entity)
    let identity = declaration?.identity ?? []
    let words = Set(mentioned.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init))
    var types: [String: AttributeType] = [:]
    var next: String? = entity
    var seen: Set<String> = []
    while let name = next, seen.insert(name).inserted, let current = model.entity(named: name) {
      for attribute in current.attributes { types[attribute.name] = attribute.type }
      next = current.parent
    }
    func rank(_ name: String) -> Int {
      if identity.contains(name) { return 0 }
      if words.contains(name) { return 1 }
      switch types[name] {
      case .json?, .binary?: return 3
      default: return 2
      }
    }
    return names.sorted { (rank($0), $0) < (rank($1), $1) }
  }

  /// The value of a number attribute as a `Double` (nil: not a number).
  static func number(_ value: AttributeValue?) -> Double? {
    switch value {
    case .integer(let number)?: Double(number)
    case .double(let number)?: number
    case .float(let number)?: Double(number)
    case .decimal(let number)?: NSDecimalNumber(decimal: number).doubleValue
    default: nil
    }
  }

  /// `1 object`, `3 objects`.
  static func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

  /// A key in the comma form every read takes (`Hearts,J`): strings as they are, other values
  /// as JSON.
  static func keyText(_ identity: [AttributeValue], dateFormat: DateFormat) -> String {
    identity.map { text($0, dateFormat) }.joined(separator: ",")
  }

  /// Objects' keys, comma-separated (each key's values joined as `keyText` joins them); none
  /// as a dash, as a missing value is.
  static func keysText(_ keys: [ObjectKey], _ dateFormat: DateFormat) -> String {
    keys.isEmpty ? "—" : keys.map { keyText($0.identity, dateFormat: dateFormat) }.joined(separator: ", ")
  }

  /// A value as the console shows it: what the JSON says in a string (text, a date in the
  /// model's format, a UUID, a URL) as it is, others as JSON, no value as a dash.
  static func text(_ value: AttributeValue?, _ dateFormat: DateFormat) -> String {
    ConsoleValues.text(value, dateFormat)
  }

  /// The console's page of an object: `/objects/ENTITY/KEY`, or, for a key a path cannot
  /// hold as one component (empty, `.`, `..`), `/objects/ENTITY?key=KEY`.
  static func objectPath(_ entity: String, _ key: String) -> String {
    guard key.isEmpty || key == "." || key == ".." else {
      return "/objects/\(pathComponent(entity))/\(pathComponent(key))"
    }
    return "/objects/\(pathComponent(entity))?key=\(pathComponent(key))"
  }

  /// A value as one path component: every byte but unreserved ones percent-encoded.
  static func pathComponent(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
  }
}
