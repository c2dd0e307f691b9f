"""Getting the memory into agent hosts: the per-turn hook, and `init`, which wires it up.

Nothing here writes a memory file: the hook only reads (through the store), and `init`
writes only the hosts' own configuration files inside the workspace.
"""
