"""Running and storing: the runner (threads, processes or a Dask cluster), the results database
and its sweep writer, and loading a stored study back."""
