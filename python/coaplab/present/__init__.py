"""Tables, figures and pages of results: terminal output, matplotlib figures, the HTML report and
comparison, and :class:`coaplab.Result` (a run with its figures)."""
