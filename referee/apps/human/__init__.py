"""A person plays a seat: at the terminal, or in a browser."""
