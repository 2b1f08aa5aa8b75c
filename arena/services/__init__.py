"""The service layer: every write and transaction of the arena goes through these functions.

Views, tasks and commands only parse input, call a service and serialise the answer.
"""
