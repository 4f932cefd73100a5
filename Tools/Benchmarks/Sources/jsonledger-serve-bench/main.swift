// The HTTP API under load: wrk (Debian's package) against a read by key and a page of 50,
// beside a hello-world route of the same server (the floor), and an import POSTed over HTTP
// beside the same import through the library. Ratios in one run; the machine's speed drifts.
//
//   swift run -c release --package-path Tools/Benchmarks jsonledger-serve-bench --objects 100000
import Foundation
import Hummingbird
import JSONLedger
import JSONLedgerServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

struct Arguments {
  var objects = 100_000
  var seconds = 10
  var connections = 16
  var importObjects = 10_000

  init() throws {
    var iterator = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = iterator.next() {
      guard let text = iterator.next(), let value = Int(text), value > 0 else {
        throw BenchFailure("\(argument) needs a positive number")
      }
      switch argument {
      case "--objects": objects = value
      case "--seconds": seconds = value
      case "--connections": connections = value
      case "--import-objects": importObjects = value
      default: throw BenchFailure("unknown argument \(argument)")
      }
    }
  }
}

struct BenchFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

func items(_ range: ClosedRange<Int>, tag: String) -> JSONValue {
  .array(
    range.map { id in
      ["id": .number(JSONNumber(id)), "name": .string("item \(id) \(tag)"), "score": .number(JSONNumber(id % 97))]
    })
}

/// Requests per second and the 99th percentile latency (ms) wrk measured.
func wrk(_ url: String, script: String?, seconds: Int, connections: Int) throws -> (Double, Double) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
  var arguments = ["-t2", "-c\(connections)", "-d\(seconds)s", "--latency"]
  if let script { arguments += ["-s", script] }
  process.arguments = arguments + [url]
  let pipe = Pipe()
  process.standardOutput = pipe
  try process.run()
  let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  func number(after label: String) -> Double? {
    guard
      let line = output.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }
      )
    else { return nil }
    let field =
      line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(label.split(separator: " ").count)
      .first.map(String.init) ?? ""
    let unit = field.drop { $0.isNumber || $0 == "." }
    guard let value = Double(field.prefix { $0.isNumber || $0 == "." }) else { return nil }
    switch unit {
    case "us": return value / 1000
    case "s": return value * 1000
    default: return value
    }
  }
  guard let rate = number(after: "Requests/sec:"), let p99 = number(after: "99%") else {
    throw BenchFailure("wrk said:\n\(output)")
  }
  if output.contains("Non-2xx") { throw BenchFailure("wrk saw errors:\n\(output)") }
  return (rate, p99)
}

func post(_ url: URL, body: [UInt8]) async throws -> Int {
  var request = URLRequest(url: url)
  request.httpMethod = "POST"
  request.httpBody = Data(body)
  request.timeoutInterval = 600
  // libcurl would otherwise send `Expect: 100-continue` and wait for an answer before the body.
  request.setValue("", forHTTPHeaderField: "Expect")
  // The API takes JSON only, as its Content-Type says (415 otherwise).
  request.setValue("application/json", forHTTPHeaderField: "Content-Type")
  let (_, response) = try await URLSession.shared.data(for: request)
  return (response as? HTTPURLResponse)?.statusCode ?? 0
}

let arguments = try Arguments()
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jsonledger-serve-bench-\(UUID())").path
defer { try? FileManager.default.removeItem(atPath: directory) }
let model = try Model {
  Entity("Item", identity: ["id"]) {
    Attribute("id", .int64)
    Attribute("name", .string)
    Attribute("score", .int64)
  }
}
let ledger = try Ledger.open(at: directory + "/store", model: model)
var seed = ledger.makeBatch()
try seed.stage(items(1...arguments.objects, tag: "seed"), as: "Item")
_ = try ledger.applySynchronously(seed)

let router = Router()
router.get("hello") { _, _ in "hello" }
LedgerRoutes(ledger: ledger).addRoutes(to: router)
let port = 18_000 + Int.random(in: 0..<2000)
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
let server = Task { try await app.runService() }
try await Task.sleep(for: .seconds(1))
let base = "http://127.0.0.1:\(port)"

let script = directory + "/keys.lua"
try """
math.randomseed(7)
request = function()
  return wrk.format(nil, "/v1/entities/Item/objects/" .. math.random(1, \(arguments.objects)))
end
""".write(toFile: script, atomically: true, encoding: .utf8)

print("HTTP API, \(arguments.objects) objects, wrk -t2 -c\(arguments.connections) -d\(arguments.seconds)s, one run")
let (floor, floorP99) = try wrk(
  base + "/hello", script: nil, seconds: arguments.seconds, connections: arguments.connections)
let (byKey, byKeyP99) = try wrk(base, script: script, seconds: arguments.seconds, connections: arguments.connections)
let (page, pageP99) = try wrk(
  base + "/v1/entities/Item/objects?limit=50", script: nil, seconds: arguments.seconds,
  connections: arguments.connections)
func row(_ name: String, _ rate: Double, _ p99: Double) {
  print(
    "| \(name) | \(String(format: "%.0f", rate)) | \(String(format: "%.2f", p99)) | \(String(format: "%.2f×", rate / floor)) |"
  )
}
// Small writes: each request POSTs one new object, a batch and a flushed commit of its own,
// from every connection at once. Applies waiting for the writer together commit together.
let posts = directory + "/posts.lua"
try """
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("first", threads * 100000000)
end
sent = 0
request = function()
  sent = sent + 1
  local body = '[{"id": ' .. (first + sent) .. ', "name": "posted", "score": 1}]'
  return wrk.format("POST", "/v1/batches?entity=Item", {["Content-Type"] = "application/json"}, body)
end
""".write(toFile: posts, atomically: true, encoding: .utf8)
let (posted, postedP99) = try wrk(
  base, script: posts, seconds: arguments.seconds, connections: arguments.connections)
print("| route | requests/s | p99 ms | vs hello-world floor |")
print("|---|---:|---:|---:|")
row("GET /hello (floor)", floor, floorP99)
row("GET one object by key", byKey, byKeyP99)
row("GET a page of 50", page, pageP99)
row("POST one new object (a batch and a flushed commit each)", posted, postedP99)

// An import of new objects, over HTTP and through the library, into the same store: three
// rounds each, alternating, the fastest of each kept (the first round also grows the file).
var httpTimes: [Duration] = []
var libraryTimes: [Duration] = []
for round in 0..<3 {
  let first = arguments.objects + 1 + round * 2 * arguments.importObjects
  let overHTTP = JSONWriter(options: []).bytes(
    from: items(first...(first + arguments.importObjects - 1), tag: "http"))
  let httpClock = ContinuousClock.now
  let status = try await post(URL(string: base + "/v1/batches?entity=Item")!, body: overHTTP)
  httpTimes.append(ContinuousClock.now - httpClock)
  guard status == 201 else { throw BenchFailure("the POST answered \(status)") }
  let second = first + arguments.importObjects
  let throughLibrary = JSONWriter(options: []).bytes(
    from: items(second...(second + arguments.importObjects - 1), tag: "library"))
  let libraryClock = ContinuousClock.now
  var batch = ledger.makeBatch()
  try batch.stage(try JSONParser.parse(throughLibrary), as: "Item")
  _ = try await ledger.apply(batch)
  libraryTimes.append(ContinuousClock.now - libraryClock)
}
let httpTime = httpTimes.min() ?? .zero
let libraryTime = libraryTimes.min() ?? .zero
print(
  "import of \(arguments.importObjects) new objects (fastest of 3): POST \(httpTime), library (parse + stage + apply) \(libraryTime): HTTP takes \(String(format: "%.2f×", httpTime / libraryTime)) the library's time"
)
server.cancel()
