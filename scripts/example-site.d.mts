export declare const SITE_PORT: number
export declare function serveSite(dir: string): Promise<() => Promise<void>>
