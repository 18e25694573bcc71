"""Accounts: sign-up, login and logout on Django's auth, and the demo user."""
