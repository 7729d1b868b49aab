import Foundation
import KizunaCore
import Testing

@testable import KizunaClient

/// `RemoteConfig.decode` the way apps decode their API: a decoder configured like theirs, a wire DTO that mirrors
/// the JSON exactly (strings where the server sends strings), then a domain type built in one throwing step.
@Suite("RemoteConfig decoding")
struct RemoteConfigDecodingTests {
    /// The wire shape: what the JSON says, numbers and enums still as strings.
    struct UserDTO: Decodable {
        var name: String
        var age: String
        var gender: String
        var favoriteColor: String?
    }

    /// The domain type the app uses.
    struct User: Equatable {
        enum Gender: Int { case unspecified = 0, female, male }
        var name: String
        var age: Int
        var gender: Gender
    }

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    static func user(_ dto: UserDTO) throws -> User {
        guard let age = Int(dto.age), (0...150).contains(age) else { throw Invalid(description: "age \"\(dto.age)\" is not a whole number of years") }
        guard let code = Int(dto.gender), let gender = User.Gender(rawValue: code) else {
            throw Invalid(description: "gender \"\(dto.gender)\" is not 0, 1 or 2")
        }
        return User(name: dto.name, age: age, gender: gender)
    }

    static func config(_ defaults: [String: JSONValue]) throws -> RemoteConfig {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-decode-\(UUID().uuidString)")
        let server = try #require(URL(string: "http://127.0.0.1:9"))
        let app = try KizunaApp(server: server, appId: "shop", directory: directory, device: DeviceContext(appVersion: "1.0.0"))
        return RemoteConfig(app: app, defaults: defaults)
    }

    @Test func theFieldNotesDTOBecomesADomainType() throws {
        let config = try Self.config(["profile": .object(["name": "Tanaka", "age": "26", "gender": "0"])])
        #expect(try config.decode(UserDTO.self, forKey: "profile", as: Self.user) == User(name: "Tanaka", age: 26, gender: .unspecified))

        let broken = try Self.config(["profile": .object(["name": "Tanaka", "age": "twenty", "gender": "0"])])
        let error = #expect(throws: KizunaError.self) { try broken.decode(UserDTO.self, forKey: "profile", as: Self.user) }
        #expect(error?.code == .validationFailed && error?.field == "profile")
        #expect(error?.message.contains("age \"twenty\"") == true, "the conversion's own reason reaches the app: \(error?.message ?? "")")
    }

    @Test func aConfiguredDecoderReadsSnakeCaseKeys() throws {
        let config = try Self.config(["profile": .object(["name": "Tanaka", "age": "26", "gender": "1", "favorite_color": "blue"])])
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let dto = try config.decode(UserDTO.self, forKey: "profile", decoder: decoder)
        #expect(dto.favoriteColor == "blue")
        #expect(try config.decode(UserDTO.self, forKey: "profile", decoder: decoder, as: Self.user).gender == .female)

        // Without the strategy the snake_case key is simply not the property's: the optional stays nil.
        #expect(try config.decode(UserDTO.self, forKey: "profile").favoriteColor == nil)
    }

    /// The README's example: a string parameter read as a `Date` by a decoder with the app's date strategy.
    @Test func aConfiguredDecoderReadsADateParameter() throws {
        let config = try Self.config(["saleEndsAt": "2026-01-01T00:00:00Z"])
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try config.decode(Date.self, forKey: "saleEndsAt", decoder: decoder) == Date(timeIntervalSince1970: 1_767_225_600))
        let plain = #expect(throws: KizunaError.self) { try config.decode(Date.self, forKey: "saleEndsAt") }
        #expect(plain?.code == .validationFailed && plain?.field == "saleEndsAt")
    }
}
