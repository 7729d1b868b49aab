import Crypto
import Foundation
import Testing

@testable import KizunaCore

/// The signed static copy of a gate policy: what verifies, and the clear error for what does not.
@Suite("Gate mirror signatures")
struct GateMirrorTests {
    static let key = Curve25519.Signing.PrivateKey()
    static let content = GateMirror.Content(
        app: "shop", version: 7, policy: .object(["maintenance": .object(["active": true])]), storeURL: "https://apps.apple.com/app/id1",
        signedAt: Date(timeIntervalSince1970: 1_800_000_000))

    @Test func aSignedMirrorVerifiesWithItsKeyAmongOthers() throws {
        let file = try GateMirror.sign(Self.content, with: Self.key)
        let other = Curve25519.Signing.PrivateKey().publicKey
        #expect(try GateMirror.verify(file, trusting: [other, Self.key.publicKey], app: "shop") == Self.content)
        // Re-encoding the JSON on the way (a CDN, a proxy) changes nothing that is signed.
        let reencoded = try JSONEncoder().encode(try JSONDecoder().decode(JSONValue.self, from: file))
        #expect(try GateMirror.verify(reencoded, trusting: [Self.key.publicKey], app: "shop").version == 7)
    }

    @Test func anAlteredPolicyIsRefusedNamingTheKey() throws {
        var envelope = try JSONDecoder().decode(GateMirror.Envelope.self, from: try GateMirror.sign(Self.content, with: Self.key))
        var lifted = Self.content
        lifted.policy = .object([:])
        envelope.payload = base64URL(try JSONEncoder().encode(lifted))
        let error = try #require(throws: KizunaError.self) {
            try GateMirror.verify(try JSONEncoder().encode(envelope), trusting: [Self.key.publicKey], app: "shop")
        }
        #expect(error.code == .badSignature && error.field == "signature")
        #expect(error.message.contains(GateMirror.keyId(of: Self.key.publicKey)) && error.message.contains("altered"))
    }

    @Test func aMirrorSignedByAnUntrustedKeyIsRefused() throws {
        let stranger = Curve25519.Signing.PrivateKey()
        let error = try #require(throws: KizunaError.self) {
            try GateMirror.verify(try GateMirror.sign(Self.content, with: stranger), trusting: [Self.key.publicKey], app: "shop")
        }
        #expect(error.code == .badSignature && error.message.contains(GateMirror.keyId(of: stranger.publicKey)))
    }

    @Test func otherFilesAndOtherAppsAreRefused() throws {
        let html = #expect(throws: KizunaError.self) { try GateMirror.verify(Data("<html>".utf8), trusting: [Self.key.publicKey], app: "shop") }
        #expect(html?.code == .validationFailed)
        let other = #expect(throws: KizunaError.self) {
            try GateMirror.verify(try GateMirror.sign(Self.content, with: Self.key), trusting: [Self.key.publicKey], app: "news")
        }
        #expect(other?.field == "app" && other?.message.contains("'shop'") == true)
    }

    @Test func publicKeysRoundTripAsText() throws {
        let text = GateMirror.publicKeyText(Self.key.publicKey)
        #expect(try GateMirror.publicKey(text).rawRepresentation == Self.key.publicKey.rawRepresentation)
        #expect(GateMirror.keyId(of: Self.key.publicKey).count == 16)
        #expect(throws: KizunaError.self) { try GateMirror.publicKey("not a key") }
        #expect(throws: KizunaError.self) { try GateMirror.publicKey(Data(repeating: 1, count: 31).base64EncodedString()) }
    }
}
