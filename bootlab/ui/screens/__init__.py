"""The app's screens: the main bench console and the key help."""
