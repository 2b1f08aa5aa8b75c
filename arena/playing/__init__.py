"""Playing a match: the runner, the players, the record it makes, the job that claims and
records it, and the executors that hand it to a worker."""
