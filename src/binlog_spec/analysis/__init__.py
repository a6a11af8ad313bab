"""The analyze report: the collector of figures, the text/markdown/JSON/CSV report and the HTML one."""
