// The JSON values, parser and writer are part of this library's API: `import JSONLedger`
// brings them, as it always has.
@_exported public import JSONLedgerJSON
