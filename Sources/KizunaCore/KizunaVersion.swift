/// The version of this Kizuna build, recorded in every store it migrates.
public enum KizunaVersion {
    /// The release version.
    public static let current = "0.1.0"
}
