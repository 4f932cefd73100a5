public import ArgumentParser
public import JSONLedger

// A batch on the command line is read as the library reads it everywhere (`BatchReference`):
// an id, or a time standing for the last batch applied at or before it.
extension BatchReference: ExpressibleByArgument {
  public init?(argument: String) { self.init(argument) }
}
