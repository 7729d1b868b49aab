import ArgumentParser
import Foundation
import KizunaServer

/// `kizuna serve`'s blob storage: a directory, or an S3-compatible bucket whose keys come from the environment only
/// (a flag would show them in `ps` and shell history).
struct BlobStorageOptions: ParsableArguments {
    @Option(
        name: .customLong("blob-dir"),
        help: """
            Keep release artifacts as files in DIR. Env: KIZUNA_BLOB_DIR. Default: blobs/ in the SQLite data directory; \
            with PostgreSQL, kizuna-blobs/ in the working directory (instances sharing the store need one they all \
            see, or an S3 bucket).
            """)
    var blobDirectory: String?

    @Option(
        name: .customLong("blob-s3-endpoint"),
        help: """
            Keep release artifacts in an S3-compatible bucket at URL (http(s)://host[:port][/path]; path-style, SigV4), with \
            the keys in KIZUNA_BLOB_S3_ACCESS_KEY and KIZUNA_BLOB_S3_SECRET_KEY. Env: KIZUNA_BLOB_S3_ENDPOINT.
            """)
    var endpoint: String?

    @Option(name: .customLong("blob-s3-bucket"), help: "The bucket. Env: KIZUNA_BLOB_S3_BUCKET.")
    var bucket: String?

    @Option(name: .customLong("blob-s3-region"), help: "The region signatures are scoped to. Env: KIZUNA_BLOB_S3_REGION. Default: us-east-1.")
    var region: String?

    func apply(to configuration: inout KizunaConfiguration, _ environment: Environment) throws {
        let directory = (blobDirectory ?? environment["KIZUNA_BLOB_DIR"]).flatMap { $0.isEmpty ? nil : $0 }
        guard let endpoint = (endpoint ?? environment["KIZUNA_BLOB_S3_ENDPOINT"]).flatMap({ $0.isEmpty ? nil : $0 }) else {
            if let directory { configuration.blobStorage = .directory(directory) }
            return
        }
        guard directory == nil else { throw ValidationError("Give --blob-dir or --blob-s3-endpoint, not both.") }
        guard let bucket = (bucket ?? environment["KIZUNA_BLOB_S3_BUCKET"]).flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw ValidationError("--blob-s3-endpoint needs --blob-s3-bucket (or KIZUNA_BLOB_S3_BUCKET).")
        }
        guard let accessKey = environment["KIZUNA_BLOB_S3_ACCESS_KEY"], !accessKey.isEmpty,
            let secretKey = environment["KIZUNA_BLOB_S3_SECRET_KEY"], !secretKey.isEmpty
        else {
            throw ValidationError("--blob-s3-endpoint needs KIZUNA_BLOB_S3_ACCESS_KEY and KIZUNA_BLOB_S3_SECRET_KEY in the environment.")
        }
        let region = (region ?? environment["KIZUNA_BLOB_S3_REGION"]).flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        configuration.blobStorage = .s3(S3Settings(endpoint: endpoint, bucket: bucket, region: region, accessKey: accessKey, secretKey: secretKey))
    }
}
