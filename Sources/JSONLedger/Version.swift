/// The version of this library and of the `jsonledger` tool built with it: the one place it is
/// written (`CHANGELOG.md` lists what each version changed).
public let jsonLedgerVersion = "0.13.0"
