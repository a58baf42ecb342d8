// Phone numbers are part of the gate's API (a decision names its number): `import ResendGate`
// keeps giving them, as before they had a module of their own.
@_exported import PhoneNumbers
// Likewise purposes and policies (`Policy`, `PolicySet`, `Purpose`, `DecisionReason`):
// a module that links neither Redis nor libevent.
@_exported import Policies
