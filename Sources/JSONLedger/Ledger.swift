public enum JSONLedgerPlaceholder {}
