"""warplens Python helpers. `warplens.inkernel`: in-kernel warp-group tracing (buffer, decode,
traces); pure Python, nothing to compile."""
