"""The widgets of the chat screen; each module holds one kind of block."""
