"""bytes <-> events: the spec (the only importer of generated/), event types and flags, the reader,
payloads, packed integers, GTIDs, times, and the writer of bare events. The only layer that knows offsets."""
