/**
 * What the kit asks of a CRM it writes a night's changes back to. One implementation per CRM, each through the CRM's
 * official client (`hubspot/` through `@hubspot/api-client`, `salesforce/` through `jsforce`); the night's write-back
 * step sees only this interface. Update only: no method creates or deletes a CRM record.
 */

export type CrmName = 'hubspot' | 'salesforce';

/** HubSpot objects by their API names; Salesforce sObjects by theirs. */
export type CrmObject = 'companies' | 'contacts' | 'Account' | 'Contact' | 'Lead';

/** A field's type as the kit writes it (the CRM's own type name is kept in `crmType`). */
export type CrmFieldType = 'string' | 'number' | 'date' | 'datetime' | 'boolean' | 'other';

export interface CrmFieldInfo {
  /** The API name (Salesforce `Signal_Count__c`) or internal name (HubSpot `signal_count`). */
  name: string;
  label: string;
  type: CrmFieldType;
  crmType: string;
  /** Text fields: the longest value the CRM takes. */
  length?: number;
  /** False for calculated, read-only or system fields: the kit never writes them. */
  updateable: boolean;
}

/** One record's new values, already typed for its fields (numbers as numbers, dates in the CRM's format). */
export interface CrmRecordUpdate {
  id: string;
  values: Record<string, string | number | boolean | null>;
}

export type CrmWriteOutcome =
  | { id: string; outcome: 'written' }
  | {
      id: string;
      outcome: 'rejected';
      /** The CRM's own code: `ENTITY_IS_DELETED`, `UNABLE_TO_LOCK_ROW`, HubSpot's `category` … */
      code: string;
      message: string;
      /** Row lock, timeout, 5xx: tried again next night. Deleted record, validation rule, permission: not. */
      transient: boolean;
    }
  | { id: string; outcome: 'not_attempted'; reason: string };

/**
 * Where a write stood when it was cut, saved by the caller before the CRM is asked to do anything it could not undo:
 * a Salesforce ingest job created is resumed by its id, never created twice.
 */
export type CrmWriteCheckpoint =
  | { crm: 'salesforce'; jobId: string }
  /** A create-job call sent at `since` (the CRM's clock, less a margin) whose answer has not come back yet. */
  | { crm: 'salesforce'; creatingSince: string }
  | { crm: 'hubspot'; batches: number };

export interface CrmWriteRequest {
  object: CrmObject;
  updates: CrmRecordUpdate[];
  /** The checkpoint a previous, cut attempt saved for these same updates. */
  resume?: CrmWriteCheckpoint;
  /** Called (and awaited) each time the checkpoint moves, before the step it guards is taken. */
  onCheckpoint?: (checkpoint: CrmWriteCheckpoint) => Promise<void>;
  /** Called with every pause the CRM's limits imposed (a 429, a daily limit near): the night slows, never fails. */
  onPause?: (pause: { ms: number; reason: string }) => void;
}

export interface CrmConnectionCheck {
  crm: CrmName;
  /** Who the token acts as (HubSpot portal id, Salesforce user name). */
  identity: string;
  /** The scopes or permissions the token was found to have. */
  scopes: string[];
  /** What is missing for a write-back to the given object, each with its fix. */
  missing: { what: string; fix: string }[];
}

export interface CrmWriter {
  readonly crm: CrmName;
  /** Tests the connection and the scopes a write-back to `object` needs. */
  check(object: CrmObject): Promise<CrmConnectionCheck>;
  /** The object's fields (HubSpot properties API; Salesforce describe). */
  describe(object: CrmObject): Promise<CrmFieldInfo[]>;
  /** Current values of `fields` for `ids` (for `fill-empty`): id → field → value (null: empty). Unknown ids absent. */
  read(object: CrmObject, ids: string[], fields: string[]): Promise<Map<string, Record<string, string | null>>>;
  /** Writes the updates by record id; one outcome per update, in any order. */
  write(request: CrmWriteRequest): Promise<CrmWriteOutcome[]>;
}
