import Foundation

/// Where release artifacts (and later attachments) are kept.
public enum BlobStorage: Sendable, Hashable {
    /// Files in a directory: one instance, or several sharing a volume.
    case directory(String)
    /// An S3-compatible bucket, for several instances without a shared volume.
    case s3(S3Settings)

    /// The store these settings describe. - Throws: `validation_failed` for an S3 endpoint that is not a URL.
    func store() throws -> any BlobStore {
        switch self {
        case .directory(let path): FileBlobStore(directory: URL(fileURLWithPath: path))
        case .s3(let settings): try S3BlobStore(settings: settings)
        }
    }
}

/// An S3-compatible bucket, addressed path-style (`endpoint/bucket/key`) and signed with SigV4.
public struct S3Settings: Sendable, Hashable, CustomStringConvertible {
    /// `http(s)://host[:port][/path]`, such as `https://s3.eu-west-1.amazonaws.com` or a MinIO server.
    public var endpoint: String
    public var bucket: String
    /// The region the signature is scoped to (`us-east-1` for most S3-compatible servers).
    public var region: String
    public var accessKey: String
    public var secretKey: String

    public init(endpoint: String, bucket: String, region: String = "us-east-1", accessKey: String, secretKey: String) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.region = region
        self.accessKey = accessKey
        self.secretKey = secretKey
    }

    /// The settings without the secret key, for logs.
    public var description: String { "s3(\(endpoint)/\(bucket), region \(region), access key \(accessKey))" }
}
