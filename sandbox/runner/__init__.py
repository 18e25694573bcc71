"""Code that runs inside the sandbox: the runner, the probe API, the wire format."""
