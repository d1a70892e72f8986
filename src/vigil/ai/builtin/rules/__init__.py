"""The analyst's own rules: over the alert itself (`alert`), Vigil's own evidence (`context`) and the kinds of
evidence vendor folders map their data onto (`endpoint`). Vendor-specific readers live in the vendor folders."""
