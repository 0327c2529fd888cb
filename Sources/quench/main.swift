print("quench")
