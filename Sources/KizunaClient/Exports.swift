// The SDK's API speaks KizunaCore's types (KizunaError, DeviceContext, UpdateDecision, JSONValue, …), so an app
// that writes `import KizunaClient` gets them too instead of having to know which module each one lives in.
@_exported import KizunaCore
