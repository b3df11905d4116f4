"""Everything that touches the outside world: codec, command line, storage details."""
