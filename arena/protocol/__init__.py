"""The bot protocol: wire types, transport, request signing and the bot URL guard."""
