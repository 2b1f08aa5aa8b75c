"""The read side: queries by resource, replays, what a seat was sent, transcripts, the embargo
on hidden information, tournament progress."""
