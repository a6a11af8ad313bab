"""What an event body holds: bodies parsed once (bodies), the generated objects as plain values
(plain_fields), length-encoded integers (packed), and compressed payloads (payload)."""
