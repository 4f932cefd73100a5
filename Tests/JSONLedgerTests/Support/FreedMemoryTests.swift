import Foundation
import JSONLedgerSupport
import Testing

@Suite("Freed memory handed back")
struct FreedMemoryTests {
  /// This process's resident memory, in bytes (`/proc/self/statm`, pages).
  private func residentBytes() throws -> Int {
    let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
    return (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// Many small blocks freed while a later one stays: glibc keeps their pages until asked.
  @Test func freedSmallBlocksStopCountingAsResident() throws {
    var blocks = (0..<32_768).map { [UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: 2_000) }
    let pinned = [UInt8](repeating: 1, count: 2_000)
    blocks.removeAll()
    let before = try residentBytes()
    FreedMemory.returnToSystem()
    let after = try residentBytes()
    // 64 MB were freed; other tests running meanwhile allocate far less than the margin.
    #expect(before - after > 24 << 20, "resident \(before >> 20) MB before, \(after >> 20) MB after")
    #expect(pinned.count == 2_000)
  }

  /// The room an array's popped elements leave goes back, and the elements left are as they
  /// were; the array grows into its room again, pages zeroed and written anew.
  @Test func theRoomPastAnArraysLastElementStopsCountingAsResident() throws {
    var numbers = (0..<8_000_000).map { UInt64($0) &* 0x9E37_79B9_7F4A_7C15 }
    numbers.removeLast(7_000_000)
    let before = try residentBytes()
    FreedMemory.returnUnusedRoom(of: &numbers)
    let after = try residentBytes()
    // 56 MB of room went back; other tests running meanwhile allocate far less than the margin.
    #expect(before - after > 24 << 20, "resident \(before >> 20) MB before, \(after >> 20) MB after")
    #expect(numbers.count == 1_000_000)
    #expect(numbers.indices.allSatisfy { numbers[$0] == UInt64($0) &* 0x9E37_79B9_7F4A_7C15 })
    numbers.append(contentsOf: (0..<1_000).map { UInt64($0) })
    #expect(numbers.suffix(1_000) == (0..<1_000).map { UInt64($0) }[...])
  }
}
