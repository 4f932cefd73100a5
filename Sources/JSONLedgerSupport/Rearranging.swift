extension Array {
  /// Puts at each position `k` the element that was at `order[k]`, where `order` is a
  /// permutation of the indices: by swaps along each cycle of the permutation, each a move
  /// of the two elements (no copy, no retain), and nothing allocated but `order`'s copy,
  /// marked as it goes.
  @inlinable
  public mutating func rearrange(by order: [Int]) {
    precondition(order.count == count, "an order for every element")
    var order = order
    withUnsafeMutableBufferPointer { buffer in
      for start in buffer.indices where order[start] != start {
        // Each position of the cycle takes the element the next one holds; the last takes
        // the first's, which the swaps carried along. A cycle is shorter than the array
        // unless `order` is not a permutation.
        var position = start
        var steps = 0
        while order[position] != start {
          let source = order[position]
          precondition(buffer.indices.contains(source) && steps < buffer.count, "the order is a permutation")
          buffer.swapAt(position, source)
          order[position] = position
          position = source
          steps += 1
        }
        order[position] = position
      }
    }
  }
}
