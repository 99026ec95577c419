package artemis

// LegacyAddressSettingKey reports whether the positional addAddressSettings form of Artemis
// 2.14 to 2.31 can set the address setting with this key (in the 2.32+ JSON shape), and the key
// getAddressSettingsAsJSON reports it under on those versions.
func LegacyAddressSettingKey(key string) (legacyKey string, ok bool) {
	for _, f := range legacyFields {
		if f.key == key || f.modernKey == key {
			return f.key, true
		}
	}
	return "", false
}
