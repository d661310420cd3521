"""mailbot: an assistant that drafts and sends email, Slack posts and invites."""
