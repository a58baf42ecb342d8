print("countdown bench: not yet")
