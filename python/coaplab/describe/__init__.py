"""What is to be run: scenarios (checked against the engine's schema), algorithms written in
Python or C, replay scripts. The lowest layer but the root modules (CONTRIBUTING.md, "Python code")."""
