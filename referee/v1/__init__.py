"""Code generated from proto/referee/v1/bot.proto by `make proto`. Never edit by hand."""
