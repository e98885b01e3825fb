"""make bench: the device measures, the host writes bench.json, tables and a plot."""
