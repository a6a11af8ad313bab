"""Events in transactions (one tracker, one summary) and the filters that choose which are output."""
