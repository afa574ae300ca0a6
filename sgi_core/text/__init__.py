"""Text handling shared by the score families: sentence splitting."""
