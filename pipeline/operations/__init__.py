"""What a command does to a cache (build, add, rename, place): the stages wired together."""
