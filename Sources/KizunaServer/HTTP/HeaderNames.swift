import HTTPTypes

/// The header names Kizuna uses that HTTPTypes does not define, in one place: each is a valid token, so the
/// force-unwraps here cannot fail, and nowhere else needs one.
extension HTTPField.Name {
    /// `X-Request-ID`: the id of the request on every log line, answered on every response.
    static let requestID = Self("X-Request-ID")!
    /// `Last-Event-ID`: where a reconnecting event-stream client resumes.
    static let lastEventID = Self("Last-Event-ID")!
    /// `X-Accel-Buffering: no` keeps nginx from buffering an event stream.
    static let accelBuffering = Self("X-Accel-Buffering")!
    /// `X-Forwarded-For`: the client's address as a trusted proxy saw it.
    static let xForwardedFor = Self("X-Forwarded-For")!
    /// `X-Api-Key`: an app's API key, for the data API's public rules.
    static let apiKey = Self("X-Api-Key")!
    /// `Sec-Fetch-Site`: whether a browser's request comes from the same origin.
    static let secFetchSite = Self("Sec-Fetch-Site")!
    /// `Referrer-Policy`: what a page's links tell the sites they lead to.
    static let referrerPolicy = Self("Referrer-Policy")!
}
