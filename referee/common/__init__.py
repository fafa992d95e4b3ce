"""Below everything: the error types, a bot's text made printable, files replaced in one step, the files shipped with the referee, the HTTP headers its pages share."""
