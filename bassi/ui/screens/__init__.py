"""The chat screen and the modal screens it opens."""
