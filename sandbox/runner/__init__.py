"""Code that runs inside the sandbox: the runner, the probe API, the observation codec and the frames that carry it."""
