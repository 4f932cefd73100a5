import ArgumentParser
import Foundation
import JSONLedger

/// Test support (hidden): applies batches in a loop, printing `committed N` after each commit,
/// so that a crash test can kill it at any moment and check the store afterwards. Batch N sets
/// every one of `--objects` albums to label "round N" and creates album "extra N".
struct Stress: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "stress", shouldDisplay: false)

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Option var batches = 1_000_000
  @Option var objects = 50

  static let model = #"""
    {"entities": {
      "Band": {"identity": "name", "attributes": {"name": "string"},
               "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
      "Album": {"identity": "name", "attributes": {"name": "string", "label": "string"},
                "relationships": {"band": {"to": "Band", "inverse": "albums"}}}
    }}
    """#

  func validate() throws {
    guard batches >= 0, objects >= 0 else { throw ValidationError("--batches and --objects cannot be negative") }
  }

  func run() async throws {
    var options = Ledger.Options()
    options.durability = writeOptions.durability
    let ledger = try Ledger.open(
      at: storeOptions.store, model: try Model(json: JSONParser.parse(Self.model)), options: options)
    var round = try ledger.head
    for _ in 0..<batches {
      round += 1
      var batch = ledger.makeBatch()
      var albums: [JSONValue] = (0..<objects).map { index in
        ["name": .string("album \(index)"), "label": .string("round \(round)"), "band": .string("band \(index % 5)")]
      }
      albums.append(["name": .string("extra \(round)"), "label": .string("round \(round)")])
      try batch.stage(.array(albums), as: "Album")
      let summary = try ledger.applySynchronously(batch)
      // Written straight to the file descriptor: nothing is left in a buffer when the process is killed.
      FileHandle.standardOutput.write(Data("committed \(summary.batchID)\n".utf8))
    }
  }
}

/// Test support (hidden): reads the stress store repeatedly and fails if one view mixes two
/// batches (albums with different labels, or a label that does not match the head).
struct ReadCheck: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "read-check", shouldDisplay: false)

  @OptionGroup var storeOptions: StoreOptions
  @Option var reads = 200

  func validate() throws {
    guard reads >= 0 else { throw ValidationError("--reads cannot be negative") }
  }

  func run() async throws {
    let ledger = try storeOptions.open()
    var checked = 0
    for _ in 0..<reads {
      let (head, labels) = try await ledger.read { view in
        (
          view.batchID,
          Set(
            try view.objects("Album").filter { $0.key.identity.first?.keyText.hasPrefix("album") == true }.compactMap {
              $0["label"]?.keyText
            })
        )
      }
      if head == 0 { continue }
      guard labels == ["round \(head)"] else {
        throw CommandFailure(message: "a read at batch \(head) saw labels \(labels.sorted())")
      }
      checked += 1
    }
    print("consistent reads: \(checked)")
  }
}
