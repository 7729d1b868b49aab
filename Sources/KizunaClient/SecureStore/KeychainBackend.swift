#if canImport(Security)
    import Foundation
    import KizunaCore
    import Security

    /// The Keychain behind ``SecureStore`` on Apple platforms: generic-password items under one service.
    struct KeychainBackend: SecureStoreBackend {
        let service: String
        let accessGroup: String?

        private func query(_ key: String? = nil) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecUseDataProtectionKeychain as String: true,
                kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
            ]
            if let key { query[kSecAttrAccount as String] = key }
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        func read(_ key: String) throws(KizunaError) -> SecureItem? {
            var query = query(key)
            query[kSecReturnData as String] = true
            query[kSecReturnAttributes as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let attributes = result as? [String: Any], let data = attributes[kSecValueData as String] as? Data else {
                throw Self.error(status, "read '\(key)'")
            }
            return SecureItem(
                key: key,
                value: data,
                attributes: SecureStore.Attributes(
                    label: attributes[kSecAttrLabel as String] as? String,
                    comment: attributes[kSecAttrComment as String] as? String,
                    created: attributes[kSecAttrCreationDate as String] as? Date ?? Date(),
                    modified: attributes[kSecAttrModificationDate as String] as? Date ?? Date()
                )
            )
        }

        func write(_ value: Data, forKey key: String, options: SecureStore.ItemOptions) throws(KizunaError) {
            var attributes: [String: Any] = [
                kSecValueData as String: value,
                kSecAttrAccessible as String: Self.accessibility(options.accessibility),
                kSecAttrSynchronizable as String: options.synchronizable,
            ]
            if let label = options.label { attributes[kSecAttrLabel as String] = label }
            if let comment = options.comment { attributes[kSecAttrComment as String] = comment }
            let status = SecItemUpdate(query(key) as CFDictionary, attributes as CFDictionary)
            if status == errSecItemNotFound {
                var item = query(key)
                item.removeValue(forKey: kSecAttrSynchronizable as String)
                item.merge(attributes) { _, new in new }
                let added = SecItemAdd(item as CFDictionary, nil)
                guard added == errSecSuccess else { throw Self.error(added, "store '\(key)'") }
            } else if status != errSecSuccess {
                throw Self.error(status, "store '\(key)'")
            }
        }

        func remove(_ key: String) throws(KizunaError) {
            let status = SecItemDelete(query(key) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.error(status, "remove '\(key)'") }
        }

        func removeAll() throws(KizunaError) {
            let status = SecItemDelete(query() as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.error(status, "remove every item") }
        }

        func keys() throws(KizunaError) -> [String] {
            var query = query()
            query[kSecReturnAttributes as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitAll
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return [] }
            guard status == errSecSuccess, let items = result as? [[String: Any]] else { throw Self.error(status, "list the items") }
            return items.compactMap { $0[kSecAttrAccount as String] as? String }
        }

        private static func accessibility(_ accessibility: SecureStore.Accessibility) -> CFString {
            switch accessibility {
            case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
            case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
            case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
            }
        }

        private static func error(_ status: OSStatus, _ action: String) -> KizunaError {
            let text = SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
            return KizunaError(.internalError, "The Keychain could not \(action): \(text).")
        }
    }
#endif
