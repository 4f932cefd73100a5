import Foundation
import Hummingbird
import JSONLedger

extension LedgerRoutes {
  func addReadRoutes<Routes: RouterMethods>(to router: Routes) {
    router.get("healthz") { _, _ in
      JSONResponse.make(["status": "ok", "head": .number(JSONNumber(try ledger.head))])
    }
    router.get("openapi.json") { _, _ in
      guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
        let data = try? Data(contentsOf: url)
      else {
        throw APIFailure(status: .internalServerError, code: "missingResource", message: "openapi.json is missing")
      }
      return Response(
        status: .ok, headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
    let v1 = router.group("v1")
    v1.get("entities") { request, context in
      try await reading(request, context) { _ in
        let names = ledger.model.entities.map(\.name)
        let counts = try await ledger.read { view in try names.map { try view.count($0) } }
        return JSONResponse.make(
          .array(
            zip(names, counts).map { name, count in ["name": .string(name), "count": .number(JSONNumber(count))] }))
      }
    }
    v1.get("entities/:entity/objects") { request, context in
      try await reading(request, context) { values in
        let query = try objectQuery(values)
        let asOf = try values.asOf(in: ledger)
        let body: @Sendable (borrowing View) throws -> JSONValue = { view in
          let page = try view.objects(query)
          return [
            "objects": .array(try view.exportJSON(page.objects, options: Self.objectOptions)),
            "next": page.next.map { .string($0.token) } ?? .null,
          ]
        }
        let page = try await read(asOf: asOf, body)
        return JSONResponse.make(page)
      }
    }
    v1.get("entities/:entity/objects/:key") { request, context in
      try await reading(request, context) { values in
        let entity = try values.path("entity")
        let key = try values.path("key")
        let asOf = try values.asOf(in: ledger)
        let body: @Sendable (borrowing View) throws -> JSONValue? = { view in
          try view.object(entity, key: .string(key)).map { try view.exportJSON($0, options: Self.objectOptions) }
        }
        let found = try await read(asOf: asOf, body)
        guard let found else { throw LedgerError.objectNotFound(entity: entity, key: .string(key), asOf: asOf) }
        return JSONResponse.make(found)
      }
    }
    v1.get("entities/:entity/objects/:key/history") { request, context in
      try await reading(request, context) { values in
        let entries = try await ledger.log(try values.path("entity"), key: .string(try values.path("key")))
        return JSONResponse.make(.array(try entries.map { try ledger.logEntryJSON($0) }))
      }
    }
    v1.get("entities/:entity/objects/:key/blame") { request, context in
      try await reading(request, context) { values in
        let blame = try await ledger.blame(
          try values.path("entity"), key: .string(try values.path("key")), asOf: try values.asOf(in: ledger))
        return JSONResponse.make(.array(blame.map(\.jsonValue)))
      }
    }
    v1.get("log") { request, context in
      try await reading(request, context) { values in
        let limit = try values.limit()
        let before = try values.query("before").map { try values.batchID($0, name: "before") }
        let entries = try await ledger.log(limit: limit, before: before)
        let next: JSONValue =
          entries.count == limit && (entries.last?.batchID ?? 0) > 1
          ? .number(JSONNumber(entries.last?.batchID ?? 0)) : .null
        return JSONResponse.make([
          "batches": .array(try entries.map { try ledger.logEntryJSON($0) }), "before": next,
        ])
      }
    }
    v1.get("batches/:batch") { request, context in
      try await reading(request, context) { values in
        let record = try await ledger.record(try values.batchID(try values.path("batch"), name: "batch"))
        return JSONResponse.make(try ledger.recordJSON(record))
      }
    }
    v1.get("diff") { request, context in
      try await reading(request, context) { values in
        guard let from = try values.batchOrTime("from", in: ledger, emptyStoreAllowed: true),
          let to = try values.batchOrTime("to", in: ledger, emptyStoreAllowed: true)
        else {
          throw APIFailure.badRequest("a diff needs from and to (batch ids, 0 the empty store, or ISO 8601 times)")
        }
        let diff = try await ledger.diff(from: from, to: to)
        return JSONResponse.make(try ledger.diffJSON(diff))
      }
    }
    v1.get("export") { request, context in
      try await reading(request, context) { values in
        let options = ExportOptions(relationships: try relationshipMode(values))
        let entity = values.query("entity")
        let asOf = try values.asOf(in: ledger)
        // What would fail the export (an unknown entity, a batch outside the log) fails
        // here, as an error with its status, before the first byte of a 200.
        _ = try await read(asOf: asOf) { view in try entity.map { try view.count($0) } }
        return Response(
          status: .ok, headers: [.contentType: JSONResponse.contentType],
          body: ExportStream.body(ledger: ledger, asOf: asOf, entity: entity, options: options))
      }
    }
  }

  /// How the API writes an object: as an export does, and `"placeholder": true` for a
  /// placeholder.
  static var objectOptions: ExportOptions {
    var options = ExportOptions()
    options.marksPlaceholders = true
    return options
  }

  /// The query of `GET /v1/entities/{entity}/objects`: `where` in the one text form of a
  /// query (`QueryText`; repeated: every one must hold), `sort` (`-weight,name`; repeated: in
  /// order), `limit`, `after`.
  func objectQuery(_ values: RequestValues) throws -> Query {
    let entity = try values.path("entity")
    var query = Query(entity)
    for condition in values.queryAll("where") { query = try query.filter(condition) }
    let sortKeys = try values.queryAll("sort").flatMap { try QueryText.sortKeys($0, entity: entity) }
    if !sortKeys.isEmpty { query = query.sorted(by: sortKeys) }
    query = query.limited(to: try values.limit())
    if let after = values.query("after") { query = query.after(try QueryCursor(token: after)) }
    return query
  }

  /// `relationships=none|ids|nested|rails` and `depth` (1 to 100) of an export, read as the
  /// library reads them (`RelationshipExport(named:depth:)`).
  func relationshipMode(_ values: RequestValues) throws -> RelationshipExport {
    let depthText = values.query("depth") ?? "3"
    guard let depth = Int(depthText) else {
      throw APIFailure.badRequest("depth must be from 1 to 100, not \"\(depthText.prefix(80))\"")
    }
    do { return try RelationshipExport(named: values.query("relationships") ?? "ids", depth: depth) } catch {
      throw APIFailure.badRequest(error.message)
    }
  }

}
