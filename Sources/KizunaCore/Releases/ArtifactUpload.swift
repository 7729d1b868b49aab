import Foundation

/// An artifact upload to start, or to find again after an interruption:
/// `POST /v1/admin/apps/{app}/releases/{release}/uploads`.
///
/// The server answers an unfinished upload of the same name, size and SHA-256 if it has one (200, with how much it
/// holds), so a client that lost its connection, or was restarted, resumes without keeping any state of its own.
public struct NewArtifactUpload: Sendable, Hashable, Codable {
    /// The artifact's name once attached (``ReleaseArtifact/isValidName(_:)``).
    public var name: String
    /// The whole file's size in bytes.
    public var size: Int64
    /// The whole file's hex SHA-256: the server checks what it assembled against it before attaching it.
    public var sha256: String
    public var contentType: String?

    public init(name: String, size: Int64, sha256: String, contentType: String? = nil) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.contentType = contentType
    }
}

/// A resumable upload of one artifact: its bytes are sent in order with
/// `PATCH /v1/admin/apps/{app}/releases/{release}/uploads/{id}` and an `Upload-Offset` header equal to ``received``;
/// the server keeps what it durably stored of each request, even one cut short, and attaches the artifact once it
/// holds ``size`` bytes whose SHA-256 is ``sha256``.
public struct ArtifactUpload: Sendable, Hashable, Codable {
    public var id: String
    public var release: String
    public var name: String
    public var size: Int64
    public var sha256: String
    public var contentType: String
    /// The bytes the server holds: where the next request starts (`Upload-Offset`).
    public var received: Int64
    /// The size of request the server handles best (the object store's part size, or more): a client sending its file
    /// in requests of this size loses at most one when cut off.
    public var chunkSize: Int64
    public var createdAt: Date
    /// When the server discards it if it is not finished (a week after its last bytes).
    public var expiresAt: Date
    /// The attached artifact, once every byte is in and checked.
    public var artifact: ReleaseArtifact?

    public init(
        id: String, release: String, name: String, size: Int64, sha256: String, contentType: String, received: Int64, chunkSize: Int64,
        createdAt: Date, expiresAt: Date, artifact: ReleaseArtifact? = nil
    ) {
        self.id = id
        self.release = release
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.contentType = contentType
        self.received = received
        self.chunkSize = chunkSize
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.artifact = artifact
    }
}
