import ResendGate
print("resendgate")
